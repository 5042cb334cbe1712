indent.log prog_a:1 prog_b:2
