module weft.dev/lab/peers/go-upstream

go 1.22
