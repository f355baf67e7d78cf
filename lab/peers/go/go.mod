module weft.dev/lab/peers/systema

go 1.22
