;; definitions
;; include js_definitions

;; include js_field_function

;; calls
;; include js_calls

;; imports
;; include js_imports

;; inherits
(class_heritage (_) @inherit.base)
