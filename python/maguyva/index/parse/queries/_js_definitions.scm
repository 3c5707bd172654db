;; JavaScript's definitions, which TypeScript has too.
(class_declaration name: (_) @name) @definition.class
(function_declaration name: (identifier) @name) @definition.function
(generator_function_declaration name: (identifier) @name) @definition.function
(method_definition name: (_) @name) @definition.function
(lexical_declaration (variable_declarator name: (identifier) @name
    value: [(arrow_function body: (_) @body) (function_expression body: (_) @body)]))
    @definition.function
(variable_declaration (variable_declarator name: (identifier) @name
    value: [(arrow_function body: (_) @body) (function_expression body: (_) @body)]))
    @definition.function
(expression_statement (assignment_expression left: (member_expression) @name
    right: [(arrow_function body: (_) @body) (function_expression body: (_) @body)]))
    @definition.function
(pair key: (property_identifier) @name
    value: [(arrow_function body: (_) @body) (function_expression body: (_) @body)])
    @definition.function
(program (lexical_declaration (variable_declarator name: (identifier) @name))
    @definition.constant (#match? @name "^[A-Z][A-Z0-9_]*$"))
(export_statement (lexical_declaration (variable_declarator name: (identifier) @name))
    @definition.constant (#match? @name "^[A-Z][A-Z0-9_]*$"))
(program (lexical_declaration (variable_declarator name: (identifier) @name
    value: (_) @_value)) @definition.variable (#not-match? @_value "^require *[(]"))
(export_statement (lexical_declaration (variable_declarator name: (identifier) @name
    value: (_) @_value)) @definition.variable (#not-match? @_value "^require *[(]"))
(program (variable_declaration (variable_declarator name: (identifier) @name
    value: (_) @_value)) @definition.variable (#not-match? @_value "^require *[(]"))
