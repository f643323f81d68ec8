import Convey

print("convey-harness: the demo lands with the harness issue")
