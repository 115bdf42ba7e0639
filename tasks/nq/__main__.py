"""python -m tasks.nq {finetune,predict,evaluate,convert,demo} [flags]"""

from tasks.common import driver
from tasks.nq.task import TASK

if __name__ == "__main__":
  driver.main(TASK)
