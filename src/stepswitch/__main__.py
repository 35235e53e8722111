from stepswitch.cli import main

main()
