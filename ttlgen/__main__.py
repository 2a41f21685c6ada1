from ttlgen.cli import main

main()
