module example.com/app/tools

go 1.22
