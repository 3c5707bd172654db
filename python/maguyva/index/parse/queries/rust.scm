;; definitions
(function_item name: (identifier) @name) @definition.function
(function_signature_item name: (identifier) @name) @definition.function
(struct_item name: (type_identifier) @name) @definition.struct
(union_item name: (type_identifier) @name) @definition.struct
(enum_item name: (type_identifier) @name) @definition.enum
(trait_item name: (type_identifier) @name) @definition.trait
(type_item name: (type_identifier) @name) @definition.type
(const_item name: (identifier) @name) @definition.constant
(static_item name: (identifier) @name) @definition.constant
(macro_definition name: (identifier) @name) @definition.macro
(mod_item name: (identifier) @name body: (_)) @definition.module
(impl_item type: (_) @name) @definition.scope

;; calls
(call_expression function: (identifier) @call.name)
(call_expression function: (scoped_identifier path: (_) @call.qualifier
    name: (identifier) @call.name))
(call_expression function: (field_expression value: (_) @call.qualifier
    field: (field_identifier) @call.name))
(call_expression function: (generic_function function: (identifier) @call.name))
(call_expression function: (generic_function function: (scoped_identifier
    path: (_) @call.qualifier name: (identifier) @call.name)))
(call_expression function: (generic_function function: (field_expression
    value: (_) @call.qualifier field: (field_identifier) @call.name)))
(macro_invocation macro: (identifier) @call.name)
(macro_invocation macro: (scoped_identifier path: (_) @call.qualifier
    name: (identifier) @call.name))

;; receivers: a parameter or a `let` declared with a type, a `let` bound to `Type { .. }` or to
;; `Type::new(..)` (and `default`, `with_..`, `from_..`, which make one by convention)
(parameter pattern: (identifier) @receiver.var type: [(type_identifier) @receiver.type
    (generic_type type: (type_identifier) @receiver.type)
    (reference_type type: [(type_identifier) @receiver.type (generic_type type: (type_identifier) @receiver.type)])])
(let_declaration pattern: (identifier) @receiver.var type: [(type_identifier) @receiver.type
    (generic_type type: (type_identifier) @receiver.type)])
(let_declaration pattern: (identifier) @receiver.var value: (struct_expression name: (type_identifier) @receiver.type))
(let_declaration pattern: (identifier) @receiver.var value: (call_expression function: (scoped_identifier
    path: (identifier) @receiver.type name: (identifier) @_made))
    (#match? @receiver.type "^[A-Z]") (#match? @_made "^(new|default|with_.*|from_.*)$"))
;; a field: a receiver (`self.engine`) in every method of its type
(field_declaration name: (field_identifier) @receiver.var type: [(type_identifier) @receiver.type
    (generic_type type: (type_identifier) @receiver.type)])

;; imports
(use_declaration argument: [(scoped_identifier) (identifier) (use_wildcard)
    (crate) (self) (super)] @import.module) @import
(use_declaration argument: (use_as_clause path: (_) @import.module)) @import
;; the item a path brings (`use a::b::C` brings C; `use a::b::*` everything public of b), and
;; what it is bound to (`use a::b::C as D`): a module re-exporting it (`pub use`) is followed
(use_declaration argument: (scoped_identifier name: (identifier) @import.name)) @import
(use_declaration argument: (use_wildcard "*" @import.name)) @import
(use_declaration argument: (use_as_clause path: (scoped_identifier name: (identifier) @import.name)
    alias: (identifier) @import.alias)) @import
(use_declaration argument: (scoped_use_list path: (_) @import.module
    list: (use_list (_) @import.name))) @import
(use_declaration argument: (scoped_use_list list: (use_list (use_as_clause
    path: (identifier) @import.name alias: (identifier) @import.alias)))) @import
(use_declaration argument: (use_list (_) @import.module)) @import
(extern_crate_declaration name: (identifier) @import.module) @import
(mod_item !body name: (identifier) @import.module) @import

;; inherits
(impl_item trait: (_) @inherit.base)
(trait_item bounds: (trait_bounds [(type_identifier) (scoped_type_identifier)
    (generic_type)] @inherit.base))
