module example.com/reversescan

go 1.26.0
