# Reads `ilgen dump` on stdin; prints each kind of mapping event with its count:
# `N TID map|unmap size=BYTES line LINE` (the source line of its site), sorted.
$2 == "map" || $2 == "unmap" {
  n = split($7, at, ":")
  print $1, $2, $4, "line", at[n - 1] | "sort | uniq -c"
}
