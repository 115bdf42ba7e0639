"""python -m tasks.hotpotqa {finetune,predict,evaluate,convert,demo} [flags]"""

from tasks.common import driver
from tasks.hotpotqa.task import TASK

if __name__ == "__main__":
  driver.main(TASK)
