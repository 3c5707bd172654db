;; definitions
(function_declaration name: (identifier) @name) @definition.function
(method_declaration
    receiver: (parameter_list (parameter_declaration type: (_) @receiver))
    name: (field_identifier) @name) @definition.method
(type_spec name: (type_identifier) @name type: (struct_type)) @definition.struct
(type_spec name: (type_identifier) @name type: (interface_type)) @definition.interface
(type_spec name: (type_identifier) @name) @definition.type
(type_alias name: (type_identifier) @name) @definition.type
(method_elem name: (field_identifier) @name) @definition.method
(const_spec name: (identifier) @name) @definition.constant
(source_file (var_declaration (var_spec name: (identifier) @name) @definition.variable))

;; calls
(call_expression function: (identifier) @call.name)
(call_expression function: (selector_expression operand: (_) @call.qualifier
    field: (field_identifier) @call.name))
;; receivers: a method's receiver, a parameter, a variable declared with a type or bound to a
;; composite literal of one
(parameter_declaration name: (identifier) @receiver.var
    type: [(type_identifier) @receiver.type (pointer_type (type_identifier) @receiver.type)])
(var_spec name: (identifier) @receiver.var
    type: [(type_identifier) @receiver.type (pointer_type (type_identifier) @receiver.type)])
(short_var_declaration left: (expression_list . (identifier) @receiver.var .)
    right: (expression_list . [(composite_literal type: (type_identifier) @receiver.type)
                               (unary_expression operand: (composite_literal type: (type_identifier) @receiver.type))] .))

;; imports
(import_spec path: (interpreted_string_literal
    (interpreted_string_literal_content) @import.module)) @import

;; inherits
(field_declaration_list (field_declaration !name type: (_) @inherit.base))
(interface_type (type_elem . [(type_identifier) (qualified_type)] @inherit.base .))
