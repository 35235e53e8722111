module example.com/intervals

go 1.19
