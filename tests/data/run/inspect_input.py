print(x * 2)
