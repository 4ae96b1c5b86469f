module github.com/pyric/pyric

go 1.26.8
