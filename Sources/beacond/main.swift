print("beacond")
