;; definitions
;; The kind of a form is read from its keyword (`ELIXIR.typed_kinds`): one pattern for the
;; forms of one shape compiles once, where one a keyword compiled each.
(call target: (identifier) @_type (arguments . (alias) @name)) @definition.typed_module
(call target: (identifier) @_type
    (arguments . [
        (call target: (identifier) @name)
        (identifier) @name
        (binary_operator left: (call target: (identifier) @name))
    ])) @definition.typed_def

;; calls
(unary_operator operator: "@" operand: (call target: (identifier) @call.ignore))
(call target: (identifier) @call.name (#not-match? @call.name "^(def|defp|defmacro|defmacrop|defmodule|defprotocol|defimpl|defstruct|defexception|defguard|defguardp|defdelegate|defoverridable|use|import|alias|require|quote|unquote|if|unless|case|cond|with|for|fn|receive|try|raise|reraise)$"))
(call target: (dot left: (_) @call.qualifier right: (identifier) @call.name))

;; imports
(call target: (identifier) @_kw (arguments . (alias) @import.module)
    (#match? @_kw "^(import|alias|require|use)$")) @import
(call target: (identifier) @_kw
    (arguments . (dot left: (alias) @import.module right: (tuple (alias) @import.name)))
    (#match? @_kw "^(import|alias|require|use)$")) @import

;; inherits
(unary_operator
    operand: (call target: (identifier) @_attr (arguments . (alias) @inherit.base))
    (#eq? @_attr "behaviour"))
(call target: (identifier) @_kw (arguments . (alias) @inherit.base)
    (#eq? @_kw "defimpl"))

;; docs
(unary_operator operand: (call target: (identifier) @_attr (arguments . (_) @doc))
    (#match? @_attr "^(doc|typedoc)$"))
(unary_operator operand: (call target: (identifier) @_attr (arguments . (_) @doc.inner))
    (#eq? @_attr "moduledoc"))
