;; definitions
(function_declaration name: (method_index_expression) @name) @definition.method
(function_declaration name: (_) @name) @definition.function
(variable_declaration (assignment_statement
    (variable_list . name: (identifier) @name .)
    (expression_list . value: (function_definition body: (_) @body) .)))
    @definition.function
(assignment_statement
    (variable_list . name: [(dot_index_expression) (identifier)] @name .)
    (expression_list . value: (function_definition body: (_) @body) .))
    @definition.function

;; calls
(function_call name: (identifier) @call.name)
(function_call name: (dot_index_expression table: (_) @call.qualifier
    field: (identifier) @call.name))
(function_call name: (method_index_expression table: (_) @call.qualifier
    method: (identifier) @call.name))

;; imports
(function_call name: (identifier) @_require
    arguments: (arguments . (string content: (string_content) @import.module))
    (#eq? @_require "require")) @import
