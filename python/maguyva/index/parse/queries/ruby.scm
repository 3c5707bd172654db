;; definitions
(class name: (_) @name) @definition.class
(module name: (_) @name) @definition.module
(method name: (_) @name) @definition.function
(singleton_method name: (_) @name) @definition.function
(assignment left: (constant) @name) @definition.constant

;; calls
(call !receiver method: (identifier) @call.name)
(call receiver: (_) @call.qualifier method: (_) @call.name)

;; imports
(call !receiver method: (identifier) @_require
    arguments: (argument_list . (string (string_content) @import.module))
    (#match? @_require "^(require|require_relative|load|autoload)$")) @import

;; inherits
(class superclass: (superclass (_) @inherit.base))
(call !receiver method: (identifier) @_mixin
    arguments: (argument_list [(constant) (scope_resolution)] @inherit.base)
    (#match? @_mixin "^(include|extend|prepend)$"))
