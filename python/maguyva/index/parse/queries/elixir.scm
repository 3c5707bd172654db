;; definitions
;; The kind of a form is read from its keyword (`ELIXIR.typed_kinds`), and what a form of one
;; shape is (a definition, an import, a base, a doc) too (`ELIXIR.keyed_roles`): one pattern for
;; the forms of one shape compiles once, where one a keyword compiled each.
;; `defmodule Name`, `defprotocol Name`, `import Mod` (alias, require, use), `defimpl Proto`:
(call target: (identifier) @_key (arguments . (alias) @_arg)) @keyed.call_alias
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
(call target: (identifier) @_kw
    (arguments . (dot left: (alias) @import.module right: (tuple (alias) @import.name)))
    (#match? @_kw "^(import|alias|require|use)$")) @import

;; docs
;; `@behaviour Mod` (a base), `@doc "..."`, `@typedoc "..."`, `@moduledoc "..."`:
(unary_operator operand: (call target: (identifier) @_key (arguments . (_) @_arg))) @keyed.attribute
