;; C's function declarators and C++'s reference declarator.
[
    ;; include c_function_declarator

    (reference_declarator (function_declarator declarator: (_) @name))
]
