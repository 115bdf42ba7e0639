"""python -m tasks.openkp {finetune,predict,evaluate,convert,demo} [flags]"""

from tasks.common import driver
from tasks.openkp.task import TASK

if __name__ == "__main__":
  driver.main(TASK)
