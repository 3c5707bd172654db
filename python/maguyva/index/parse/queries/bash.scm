;; definitions
(function_definition name: (word) @name) @definition.function

;; calls
(command name: (command_name (word) @call.name)
    (#not-match? @call.name "^(source|[.])$"))

;; imports
(command name: (command_name (word) @_cmd) . argument: (_) @import.module
    (#match? @_cmd "^(source|[.])$")) @import
