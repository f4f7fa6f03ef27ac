# Builds one C file the way make-based projects do, with $(CC) set to `ilgen cc` by the test.
$(OUT): $(SRC)
	$(CC) -O0 -I $(INC) -o $@ $(SRC)
