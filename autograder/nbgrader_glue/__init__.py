"""nbgrader's extension points the kit fills: preprocessors, exporters, plugins, server extensions."""
