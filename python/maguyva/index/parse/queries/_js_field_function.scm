;; A class field holding a function (JavaScript and TypeScript).
(field_definition property: (_) @name value: (arrow_function body: (_) @body))
    @definition.function
