module payd

go 1.26
