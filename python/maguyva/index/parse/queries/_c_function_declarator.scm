;; The declarator of a C function's name, through pointers (C and C++).
(function_declarator declarator: (_) @name)
(pointer_declarator declarator: (function_declarator declarator: (_) @name))
(pointer_declarator declarator: (pointer_declarator
    declarator: (function_declarator declarator: (_) @name)))
