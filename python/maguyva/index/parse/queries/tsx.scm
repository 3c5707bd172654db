;; definitions
;; include ts_definitions

;; calls
;; include js_calls

;; imports
;; include js_imports

;; inherits
;; include ts_inherits
