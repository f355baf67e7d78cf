module weft.dev/lab/peers/goclient

go 1.22
