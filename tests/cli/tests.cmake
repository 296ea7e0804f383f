sonde_cli_test(help_docs)
