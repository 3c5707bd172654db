;; Type declarations C# and Java write alike.
(class_declaration name: (identifier) @name) @definition.class
        (record_declaration name: (identifier) @name) @definition.class
        (interface_declaration name: (identifier) @name) @definition.interface
