;; definitions
(function name: (variable) @name) @definition.function
(bind name: (variable) @name) @definition.function
(class_declarations (signature name: (variable) @name) @definition.function)
(data_type name: (name) @name) @definition.type
(newtype name: (name) @name) @definition.type
(type_synomym name: (name) @name) @definition.type
(type_family name: (name) @name) @definition.type
(class name: (name) @name) @definition.interface
(instance patterns: (type_patterns . (_) @name)) @definition.scope

;; calls
;; One pattern for both forms: a pattern a form compiled each.
(apply function: [
    (variable) @call.name
    (qualified module: (_) @call.qualifier id: (variable) @call.name)
])

;; imports
(import module: (module) @import.module) @import
(import module: (module) @import.module names: (import_list (import_name) @import.name))
    @import

;; inherits
(instance name: (_) @inherit.base)

;; docs
(signature name: (variable) @name) @signature
