;; Method and constructor declarations C# and Java write alike.
(method_declaration name: (identifier) @name) @definition.function
        (constructor_declaration name: (identifier) @name) @definition.function
