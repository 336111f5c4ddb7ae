module example.com/covmod

go 1.22
