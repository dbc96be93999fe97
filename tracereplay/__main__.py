from tracereplay.cli.app import main

main()
