from tritonfleet.cli import main

main()
