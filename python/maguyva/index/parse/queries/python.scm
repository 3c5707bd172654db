;; definitions
(class_definition name: (identifier) @name) @definition.class
(function_definition name: (identifier) @name) @definition.function
(module (assignment left: (identifier) @name) @definition.constant
    (#match? @name "^[A-Z][A-Z0-9_]*$"))
(module (assignment left: (identifier) @name) @definition.variable)
(class_definition body: (block (assignment left: (identifier) @name) @definition.constant)
    (#match? @name "^[A-Z][A-Z0-9_]*$"))

;; calls
(call function: (identifier) @call.name)
(call function: (attribute object: (_) @call.qualifier attribute: (identifier) @call.name))
;; a bare decorator is applied: a call of it
(decorator (identifier) @call.name)
(decorator (attribute object: (_) @call.qualifier attribute: (identifier) @call.name))
;; uses: a name passed as a value (`register(on_save)`, `map(self.clean, rows)`, `key=by_name`)
(call arguments: (argument_list (identifier) @use.name))
(call arguments: (argument_list (attribute object: (_) @use.qualifier attribute: (identifier) @use.name)))
(call arguments: (argument_list (keyword_argument value: (identifier) @use.name)))
(call arguments: (argument_list (keyword_argument value: (attribute object: (_) @use.qualifier attribute: (identifier) @use.name))))
;; receivers: a name bound to an instance of a class, by a constructor call or an annotation
(assignment left: (identifier) @receiver.var right: (call function: (identifier) @receiver.type)
    (#match? @receiver.type "^[A-Z]"))
(typed_parameter (identifier) @receiver.var type: (type (identifier) @receiver.type))
(typed_default_parameter name: (identifier) @receiver.var type: (type (identifier) @receiver.type))
;; an attribute of the instance (`self.router = Router()`, `self.router: web.Router = ...`): a
;; receiver in every method of its class
(assignment left: (attribute object: (identifier) @_self attribute: (identifier)) @receiver.var
    right: (call function: [(identifier) @receiver.type (attribute attribute: (identifier) @receiver.type)])
    (#eq? @_self "self") (#match? @receiver.type "^[A-Z]"))
(assignment left: (attribute object: (identifier) @_self attribute: (identifier)) @receiver.var
    type: (type [(identifier) @receiver.type (attribute attribute: (identifier) @receiver.type)])
    (#eq? @_self "self"))

;; imports
(import_statement name: (dotted_name) @import.module) @import
(import_statement name: (aliased_import name: (dotted_name) @import.module alias: (identifier) @import.alias)) @import
(import_from_statement module_name: (_) @import.module
    name: [(dotted_name) @import.name
           (aliased_import name: (dotted_name) @import.name alias: (identifier) @import.alias)])
    @import
(import_from_statement module_name: (_) @import.module (wildcard_import) @import.name)
    @import

;; inherits
(class_definition superclasses: (argument_list [(identifier) (attribute) (subscript)]
    @inherit.base))

;; docs
(function_definition body: (block . (string) @doc.inner))
(class_definition body: (block . (string) @doc.inner))
(module . (string) @doc.inner)
