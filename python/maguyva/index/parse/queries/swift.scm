;; definitions
(class_declaration "struct" name: (type_identifier) @name) @definition.struct
(class_declaration "enum" name: (type_identifier) @name) @definition.enum
(class_declaration "extension" name: (_) @name) @definition.scope
(class_declaration name: (type_identifier) @name) @definition.class
(protocol_declaration name: (type_identifier) @name) @definition.interface
(function_declaration name: (simple_identifier) @name) @definition.function
(protocol_function_declaration name: (simple_identifier) @name) @definition.function
(init_declaration "init" @name) @definition.function
(deinit_declaration "deinit" @name) @definition.function
(typealias_declaration name: (type_identifier) @name) @definition.type

;; calls
;; One pattern for both forms: a pattern a form compiled each (about 5 ms apiece).
(call_expression . [
    (simple_identifier) @call.name
    (navigation_expression target: (_) @call.qualifier
        suffix: (navigation_suffix suffix: (simple_identifier) @call.name))
])

;; imports
(import_declaration (identifier) @import.module) @import

;; inherits
(inheritance_specifier inherits_from: (_) @inherit.base)
