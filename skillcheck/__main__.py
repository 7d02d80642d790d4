from skillcheck._entry import main

if __name__ == "__main__":
    main()
