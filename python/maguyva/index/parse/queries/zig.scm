;; definitions
(Decl (FnProto function: (IDENTIFIER) @name) (Block) @body) @definition.function
(Decl (FnProto function: (IDENTIFIER) @name)) @definition.function
;; A container's kind is read from its keyword (`ZIG.typed_kinds`): one pattern compiles once,
;; where one a kind compiled three times.
(Decl (VarDecl variable_type_function: (IDENTIFIER) @name
    (ErrorUnionExpr (SuffixExpr (ContainerDecl (ContainerDeclType) @_type))))) @definition.typed_container
(Decl (VarDecl "const" variable_type_function: (IDENTIFIER) @name)
    (#match? @name "^[A-Z][A-Z0-9_]*$")) @definition.constant

;; calls
(SuffixExpr variable_type_function: (IDENTIFIER) @call.name . (FnCallArguments))
(SuffixExpr (FieldOrFnCall function_call: (IDENTIFIER) @call.name)) @call.callee

;; imports
(SuffixExpr (BUILTINIDENTIFIER) @_builtin
    (FnCallArguments (ErrorUnionExpr (SuffixExpr (STRINGLITERALSINGLE) @import.module)))
    (#eq? @_builtin "@import")) @import
