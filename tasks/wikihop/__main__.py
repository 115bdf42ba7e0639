"""python -m tasks.wikihop {finetune,predict,evaluate,convert,demo} [flags]"""

from tasks.common import driver
from tasks.wikihop.task import TASK

if __name__ == "__main__":
  driver.main(TASK)
