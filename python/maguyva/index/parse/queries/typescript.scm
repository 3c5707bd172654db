;; definitions
;; include ts_definitions

;; calls
;; include js_calls
;; receivers: a name bound to a new instance of a class, or declared with a type
(variable_declarator name: (identifier) @receiver.var value: (new_expression constructor: (identifier) @receiver.type))
(variable_declarator name: (identifier) @receiver.var type: (type_annotation (type_identifier) @receiver.type))
(required_parameter pattern: (identifier) @receiver.var type: (type_annotation (type_identifier) @receiver.type))
(optional_parameter pattern: (identifier) @receiver.var type: (type_annotation (type_identifier) @receiver.type))
;; a field: a receiver (`this.router`) in every method of its class
(public_field_definition name: (property_identifier) @receiver.var type: (type_annotation (type_identifier) @receiver.type))

;; imports
;; include js_imports

;; inherits
;; include ts_inherits
