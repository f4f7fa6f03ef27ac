show environment ILGEN_OPTIONS
bt
frame function task
