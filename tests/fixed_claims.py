"""Fixed claims the shipped verifier must decide (tests/models): each a question, its evidence,
the right answer, and another question's answer from the same passage."""

FIXED = [
    ("Who approved the contract?", "(Contract) The contract was signed by Ms. Lin and approved by Mr. Park in 2021.",
     "The contract was approved by Mr. Park.", "The contract was approved by Ms. Lin."),
    ("When did the bridge open to traffic?",
     "(Golden Gate Bridge) Construction began in 1933 and the bridge opened to traffic in 1937.",
     "The bridge opened to traffic in 1937.", "The bridge opened to traffic in 1933."),
    ("谁负责记录会议？", "(会议) 会议由王经理主持，李秘书负责记录。", "李秘书负责记录会议。", "王经理负责记录会议。"),
    ("出差住宿费每晚最多报销多少？", "(员工手册) 员工出差期间的住宿费用每晚不超过五百元，餐费每天不超过一百元。",
     "住宿费每晚最多报销五百元。", "住宿费每晚最多报销一百元。"),
]
