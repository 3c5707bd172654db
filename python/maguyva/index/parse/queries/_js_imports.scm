;; JavaScript's imports and requires, which TypeScript has too.
(import_statement source: (string (string_fragment) @import.module)) @import
(import_statement (import_clause (named_imports (import_specifier name: (_) @import.name alias: (_)? @import.alias)))
    source: (string (string_fragment) @import.module)) @import
(import_statement (import_clause (identifier) @import.name)
    source: (string (string_fragment) @import.module)) @import
(import_statement (import_clause (namespace_import) @import.name)
    source: (string (string_fragment) @import.module)) @import
(export_statement source: (string (string_fragment) @import.module)) @import
;; re-exports: `export { a, b as c } from './m'`, `export * from './m'` bring those names too
(export_statement (export_clause (export_specifier name: (_) @import.name alias: (_)? @import.alias))
    source: (string (string_fragment) @import.module)) @import
(export_statement "*" @import.name source: (string (string_fragment) @import.module)) @import
(call_expression function: (identifier) @_require
    arguments: (arguments . (string (string_fragment) @import.module))
    (#eq? @_require "require")) @import
(call_expression function: (import)
    arguments: (arguments . (string (string_fragment) @import.module))) @import
