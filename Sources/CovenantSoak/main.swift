print("soak")
