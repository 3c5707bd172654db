;; definitions
;; include c_definitions

;; calls
;; include c_calls

;; imports
;; include c_imports
