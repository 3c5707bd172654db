;; TypeScript's base classes and interfaces, for .ts and .tsx.
(extends_clause value: (_) @inherit.base)
(implements_clause (_) @inherit.base)
(extends_type_clause type: (_) @inherit.base)
