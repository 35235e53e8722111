from stepswitch.cli.app import main

main()
