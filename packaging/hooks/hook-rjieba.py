# rjieba (jieba-rs): the dictionary is compiled into rjieba.abi3.so; nothing else to collect.
hiddenimports = ["rjieba.rjieba"]
