;; definitions
;; include js_definitions

;; include js_field_function

;; calls
;; include js_calls
;; receivers: a name bound to a new instance of a class
(variable_declarator name: (identifier) @receiver.var value: (new_expression constructor: (identifier) @receiver.type))

;; imports
;; include js_imports

;; inherits
(class_heritage (_) @inherit.base)
