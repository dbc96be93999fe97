"""The SQL behind each page: parameterised, paged and aggregated in DuckDB."""
