"""The surfaces over the pipeline: the Python API (`Index`, `Corpus`), the command line and the
MCP server. Nothing outside this package imports it but the entry points (`maguyva`,
`python -m maguyva`)."""
